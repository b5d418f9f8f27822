#include "frontend/NodeContext.h"
void mlir::dlc::addLossRules(OpRuleTable &) {}
