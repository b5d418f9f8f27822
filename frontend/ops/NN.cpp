#include "frontend/NodeContext.h"
void mlir::dlc::addNNRules(OpRuleTable &) {}
