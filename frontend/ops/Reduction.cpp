#include "frontend/NodeContext.h"
void mlir::dlc::addReductionRules(OpRuleTable &) {}
