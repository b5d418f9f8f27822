#include "frontend/NodeContext.h"
void mlir::dlc::addNormalizationRules(OpRuleTable &) {}
