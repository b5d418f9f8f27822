#include "frontend/NodeContext.h"
void mlir::dlc::addTensorRules(OpRuleTable &) {}
