//===- OpRules.cpp - The table of supported ONNX ops ----------------------===//

#include "frontend/NodeContext.h"

using namespace mlir::dlc;

const OpRuleTable &mlir::dlc::opRules() {
  static const OpRuleTable table = [] {
    OpRuleTable t;
    addElementwiseRules(t);
    addTensorRules(t);
    addReductionRules(t);
    addNNRules(t);
    addNormalizationRules(t);
    addLossRules(t);
    addImageRules(t);
    addRecurrentRules(t);
    return t;
  }();
  return table;
}
