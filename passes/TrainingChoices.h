//===- TrainingChoices.h - The enumerated training options ------*- C++ -*-===//
//
// The loss, optimizer, schedule and precision choices of the training
// passes and pipeline, as enums: an option of one of these types accepts
// exactly the spellings below, and the passes switch on cases, not
// strings. One table per enum gives each case its spelling and help, for
// options, messages and printed pipelines alike.
//
//===----------------------------------------------------------------------===//
#ifndef DLC_PASSES_TRAININGCHOICES_H
#define DLC_PASSES_TRAININGCHOICES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::dlc {

/// dlc-add-loss's loss (torch.nn's names in comments in Loss.cpp).
enum class LossKind { CrossEntropy, Mse, L1, BceWithLogits, Model };
/// dlc-optimizer's update rule.
enum class OptimizerKind { Sgd, Adam, AdamW };
/// The learning-rate factor after warmup.
enum class LrSchedule { Constant, Linear, Cosine };
/// The training pipeline's numerics.
enum class Precision { Fp32, Tf32, Bf16, Fp16 };
/// dlc-mixed-precision's low type.
enum class LowPrecision { Bf16, Fp16 };
/// Whether the loss is scaled dynamically; Auto follows the precision.
enum class LossScalingMode { Auto, Dynamic, None };

/// One case of an enumerated option: how it is written and its help.
template <typename E> struct Spelling {
  E value;
  llvm::StringLiteral name;
  llvm::StringLiteral help;
};

llvm::ArrayRef<Spelling<LossKind>> spellings(LossKind);
llvm::ArrayRef<Spelling<OptimizerKind>> spellings(OptimizerKind);
llvm::ArrayRef<Spelling<LrSchedule>> spellings(LrSchedule);
llvm::ArrayRef<Spelling<Precision>> spellings(Precision);
llvm::ArrayRef<Spelling<LowPrecision>> spellings(LowPrecision);
llvm::ArrayRef<Spelling<LossScalingMode>> spellings(LossScalingMode);

/// How `value` is written in options.
template <typename E> llvm::StringRef spell(E value) {
  for (const Spelling<E> &s : spellings(E{}))
    if (s.value == value)
      return s.name;
  return "";
}

/// The option modifier that makes an option of enum type E accept E's
/// spellings (llvm::cl::values from the table): pass it where an option
/// takes cl::values, in C++ or in Passes.td's option flags.
template <typename E> struct EnumValues {
  template <typename Opt> void apply(Opt &option) const {
    for (const Spelling<E> &s : spellings(E{}))
      option.getParser().addLiteralOption(s.name, s.value, s.help);
  }
};
template <typename E> EnumValues<E> enumValues() { return {}; }

/// The parser of the training pipeline's enum options (the tools' flags):
/// a word that is no case is refused with the cases listed. (Passes.td's
/// options keep MLIR's parser, whose message names only the word.)
template <typename E> class EnumParser : public llvm::cl::parser<E> {
public:
  using llvm::cl::parser<E>::parser;

  bool parse(llvm::cl::Option &option, llvm::StringRef, llvm::StringRef arg,
             E &value) {
    for (const Spelling<E> &s : spellings(E{}))
      if (arg == s.name) {
        value = s.value;
        return false;
      }
    std::string cases = llvm::join(
        llvm::map_range(spellings(E{}),
                        [](const Spelling<E> &s) { return s.name.str(); }),
        ", ");
    return option.error("'" + arg + "' is not one of " + cases);
  }
  /// How MLIR prints the option's value back (PassOptions::print), as the
  /// word it was given as.
  static void print(llvm::raw_ostream &os, const E &value) {
    os << spell(value);
  }
};

} // namespace mlir::dlc

#endif // DLC_PASSES_TRAININGCHOICES_H
