//===- OpRules.cpp - The table of supported ONNX ops ----------------------===//

#include "frontend/NodeContext.h"

using namespace mlir::dlc;

const OpRuleTable &mlir::dlc::opRules() {
  static const OpRuleTable table = [] {
    OpRuleTable t;
    addElementwiseRules(t);
    addShapeRules(t);
    addIndexingRules(t);
    addConstantRules(t);
    addReductionRules(t);
    addLinearRules(t);
    addConvRules(t);
    addPoolRules(t);
    addNormalizationRules(t);
    addLossRules(t);
    addResizeRules(t);
    addImageRules(t);
    addRecurrentRules(t);
    addSortingRules(t);
    addSamplingRules(t);
    return t;
  }();
  return table;
}
