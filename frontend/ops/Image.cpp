#include "frontend/NodeContext.h"
void mlir::dlc::addImageRules(OpRuleTable &) {}
