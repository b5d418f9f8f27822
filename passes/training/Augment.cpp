//===- Augment.cpp - Random data augmentation inside the training step ----===//
//
// Each image argument ([N, C, H, W], float) of the training model function
// is replaced by its augmented form, computed by dlc ops in the step itself,
// on the device that trains. Every sample draws its own parameters from
// dlc.random_uniform under the step's seed (@"dlc.rng_seed", which the step
// advances; dropout draws from the same seed on streams of its own), so a
// run is reproducible and resumes exactly. A sample's images (an image and
// its mask, say) share its draws: they are flipped, cropped and rotated
// alike. 16-bit images are augmented in float32 (pixel coordinates and
// indices are exact there) and rounded back once. The transforms, in the order
// given, as torchvision's functional transforms compute them:
//  - hflip, vflip: the sample is mirrored when its draw u < 0.5;
//  - crop:P: zero padding of P on each side, then the H x W window at
//    (floor(u1 (2P + 1)), floor(u2 (2P + 1))): two gather_elements;
//  - rotate:D: counter-clockwise by (2u - 1) D degrees about the image
//    center, bilinear, zero outside (F.rotate: the inverse map of each
//    output pixel's center, grid_sample's four neighbours and weights);
//  - normalize:MEAN/STD: (x - mean[c]) / std[c], one value or one per
//    channel, comma-separated.
// Only the training function changes: @forward (inference, evaluation)
// sees the images as they are.
//
//===----------------------------------------------------------------------===//

#include "ir/Dialect.h"
#include "ir/GradientUtils.h"
#include "ir/Roles.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

namespace mlir::dlc {
#define GEN_PASS_DEF_DLCAUGMENT
#include "passes/Passes.h.inc"

using namespace grad;

namespace {

/// Streams of the augmentation draws, one per draw of the transform list:
/// far above the dropout streams the importer numbers from 0.
constexpr int64_t kFirstStream = int64_t(1) << 30;

struct Transform {
  enum Kind { HFlip, VFlip, Crop, Rotate, Normalize } kind;
  /// crop's padding, rotate's largest angle in degrees.
  double amount = 0;
  /// normalize's mean and standard deviation (one, or one per channel).
  SmallVector<double> mean, std;
};

/// Parses "1.5" into `value`.
bool parseNumber(StringRef text, double &value) {
  return !text.trim().getAsDouble(value);
}

/// Parses a list of numbers separated by commas.
bool parseNumbers(StringRef text, SmallVector<double> &values) {
  SmallVector<StringRef> parts;
  text.split(parts, ',');
  for (StringRef part : parts) {
    double v;
    if (!parseNumber(part, v))
      return false;
    values.push_back(v);
  }
  return !values.empty();
}

/// The transforms `spec` names. normalize's lists have commas of their own:
/// a part that names no transform continues the normalize before it.
FailureOr<SmallVector<Transform>> parseTransforms(StringRef spec,
                                                  Operation *where) {
  SmallVector<StringRef> parts;
  spec.split(parts, ',', -1, /*KeepEmpty=*/false);
  SmallVector<std::string> items;
  for (StringRef part : parts) {
    StringRef name = part.split(':').first.trim();
    bool named = llvm::is_contained(
        {"hflip", "vflip", "crop", "rotate", "normalize"}, name);
    if (!named && !items.empty() &&
        StringRef(items.back()).starts_with("normalize:"))
      items.back() += ("," + part).str();
    else
      items.push_back(part.trim().str());
  }
  SmallVector<Transform> transforms;
  for (StringRef item : items) {
    auto [name, argument] = item.split(':');
    Transform t;
    bool ok = true;
    if (name == "hflip" || name == "vflip") {
      t.kind = name == "hflip" ? Transform::HFlip : Transform::VFlip;
      ok = !item.contains(':');
    } else if (name == "crop") {
      t.kind = Transform::Crop;
      ok = parseNumber(argument, t.amount) && t.amount >= 0 &&
           t.amount == std::floor(t.amount) && t.amount <= 4096;
    } else if (name == "rotate") {
      t.kind = Transform::Rotate;
      ok = parseNumber(argument, t.amount) && t.amount >= 0 && t.amount <= 180;
    } else if (name == "normalize") {
      t.kind = Transform::Normalize;
      auto [mean, std] = argument.split('/');
      ok = parseNumbers(mean, t.mean) && parseNumbers(std, t.std) &&
           llvm::all_of(t.std, [](double s) { return s != 0; });
    } else {
      return where->emitError()
             << "unknown augmentation '" << item
             << "' (hflip, vflip, crop:P, rotate:D, normalize:MEAN/STD)";
    }
    if (!ok)
      return where->emitError()
             << "augmentation '" << item
             << "' is malformed (crop:P with a whole P >= 0, rotate:D with "
                "0 <= D <= 180, normalize:MEAN/STD with comma-separated "
                "numbers and no zero STD)";
    transforms.push_back(std::move(t));
  }
  return transforms;
}

/// Builds the augmentation of one image at the start of the function.
class ImageAugmenter {
public:
  ImageAugmenter(OpBuilder &b, Location loc, Value seed, int64_t firstStream)
      : b(b), loc(loc), seed(seed), stream(firstStream) {}

  /// `image` through `transforms`, computed in float32 or float64.
  FailureOr<Value> augment(Value image, ArrayRef<Transform> transforms) {
    Type element = typeOf(image).getElementType();
    bool wide = element.isF32() || element.isF64();
    Value x = wide ? image : castTo(b, loc, image, b.getF32Type());
    for (const Transform &t : transforms) {
      FailureOr<Value> next = apply(x, t);
      if (failed(next))
        return failure();
      x = *next;
    }
    return wide ? x : castTo(b, loc, x, element);
  }

private:
  FailureOr<Value> apply(Value x, const Transform &t) {
    switch (t.kind) {
    case Transform::HFlip:
      return flip(x, 3);
    case Transform::VFlip:
      return flip(x, 2);
    case Transform::Crop:
      return crop(x, static_cast<int64_t>(t.amount));
    case Transform::Rotate:
      return rotate(x, t.amount);
    case Transform::Normalize:
      return normalize(x, t);
    }
    llvm_unreachable("every transform is handled");
  }

  /// One draw in [0, 1] per sample (1 only by rounding), [N, 1, 1, 1], from
  /// a stream of its own.
  Value draw(Value x) {
    RankedTensorType type = typeOf(x);
    auto drawType = RankedTensorType::get({type.getDimSize(0), 1, 1, 1},
                                          type.getElementType());
    return RandomUniformOp::create(b, loc, drawType, seed, /*offset=*/Value(),
                                   stream++);
  }
  Value constant(Type element, double value) {
    return scalar(b, loc, element, value);
  }
  /// A constant of `shape` holding 0, 1, ... along `axis`.
  Value iota(ArrayRef<int64_t> shape, int64_t axis, Type element) {
    int64_t count = ShapedType::getNumElements(shape);
    SmallVector<int64_t> strides(shape.size(), 1);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
      strides[d] = strides[d + 1] * shape[d + 1];
    auto type = RankedTensorType::get(shape, element);
    SmallVector<Attribute> values;
    for (int64_t i = 0; i < count; ++i) {
      int64_t v = i / strides[axis] % shape[axis];
      values.push_back(isa<FloatType>(element)
                           ? Attribute(b.getFloatAttr(element, v))
                           : Attribute(b.getIntegerAttr(element, v)));
    }
    return ConstantOp::create(b, loc, DenseElementsAttr::get(type, values));
  }

  Value flip(Value x, int64_t axis) {
    RankedTensorType type = typeOf(x);
    SmallVector<int64_t> offsets(4, 0), steps(4, 1);
    offsets[axis] = type.getDimSize(axis) - 1;
    steps[axis] = -1;
    Value flipped = SliceOp::create(b, loc, x, offsets, type.getShape(), steps);
    Value u = draw(x);
    Value chosen = CompareOp::create(b, loc, ComparePredicate::lt, u,
                                     constant(type.getElementType(), 0.5));
    return SelectOp::create(b, loc, chosen, flipped, x);
  }

  /// An image's element type and its [N, C, H, W] sizes.
  struct Image {
    Type element;
    int64_t n, c, h, w;
  };
  static Image imageOf(Value x) {
    RankedTensorType type = typeOf(x);
    ArrayRef<int64_t> shape = type.getShape();
    return {type.getElementType(), shape[0], shape[1], shape[2], shape[3]};
  }

  Value crop(Value x, int64_t pad) {
    if (pad == 0)
      return x;
    auto [element, n, c, h, w] = imageOf(x);
    Value padded =
        PadOp::create(b, loc, x, Value(), SmallVector<int64_t>{0, 0, pad, pad},
                      SmallVector<int64_t>{0, 0, pad, pad}, PadMode::constant);
    // The window's corner along one axis: floor(u (2P + 1)), at most 2P.
    auto offset = [&]() {
      Value scaled = mul(b, loc, draw(x), constant(element, 2 * pad + 1));
      Value corner = MinOp::create(b, loc, FloorOp::create(b, loc, scaled),
                                   constant(element, 2 * pad));
      return castTo(b, loc, corner, b.getI64Type());
    };
    Value top = offset(), left = offset();
    Type index = b.getI64Type();
    Value rows = add(b, loc, iota({1, 1, h, 1}, 2, index), top);
    Value tall = GatherElementsOp::create(
        b, loc, padded, broadcastTo(b, loc, rows, {n, c, h, w + 2 * pad}), 2);
    Value cols = add(b, loc, iota({1, 1, 1, w}, 3, index), left);
    return GatherElementsOp::create(b, loc, tall,
                                    broadcastTo(b, loc, cols, {n, c, h, w}), 3);
  }

  Value rotate(Value x, double degrees) {
    if (degrees == 0)
      return x;
    auto [element, n, c, h, w] = imageOf(x);
    // F.rotate samples output pixel (i, j) at the inverse rotation of its
    // center: with r = -angle and p = (j - (W-1)/2, i - (H-1)/2),
    // x = cos r p.x + sin r p.y + (W-1)/2, y = -sin r p.x + cos r p.y +
    // (H-1)/2.
    Value angle = mul(b, loc,
                      sub(b, loc, mul(b, loc, draw(x), constant(element, 2.0)),
                          constant(element, 1.0)),
                      constant(element, -degrees * M_PI / 180.0));
    angle = reshape(b, loc, angle, {n, 1, 1});
    Value cosine = CosOp::create(b, loc, angle);
    Value sine = SinOp::create(b, loc, angle);
    Value px = sub(b, loc, iota({1, h, w}, 2, element),
                   constant(element, (w - 1) / 2.0));
    Value py = sub(b, loc, iota({1, h, w}, 1, element),
                   constant(element, (h - 1) / 2.0));
    Value sx =
        add(b, loc, add(b, loc, mul(b, loc, cosine, px), mul(b, loc, sine, py)),
            constant(element, (w - 1) / 2.0));
    Value sy =
        add(b, loc, sub(b, loc, mul(b, loc, cosine, py), mul(b, loc, sine, px)),
            constant(element, (h - 1) / 2.0));
    Value x0 = FloorOp::create(b, loc, sx), y0 = FloorOp::create(b, loc, sy);
    Value one = constant(element, 1.0);
    Value wx1 = sub(b, loc, sx, x0), wy1 = sub(b, loc, sy, y0);
    Value wx0 = sub(b, loc, one, wx1), wy0 = sub(b, loc, one, wy1);
    Value flat = reshape(b, loc, x, {n, c, h * w});
    // grid_sample's corners in its order: north-west, north-east,
    // south-west, south-east; a corner outside the image adds nothing.
    Value sum;
    for (int64_t dy : {0, 1}) {
      for (int64_t dx : {0, 1}) {
        Value xi = dx ? add(b, loc, x0, one) : x0;
        Value yi = dy ? add(b, loc, y0, one) : y0;
        Value inside = inBounds(xi, w);
        inside = AndOp::create(b, loc, inside, inBounds(yi, h));
        Value at =
            add(b, loc, mul(b, loc, clampTo(yi, h), constant(element, w)),
                clampTo(xi, w));
        Value index =
            reshape(b, loc, castTo(b, loc, at, b.getI64Type()), {n, 1, h * w});
        Value value = GatherElementsOp::create(
            b, loc, flat, broadcastTo(b, loc, index, {n, c, h * w}), 2);
        Value weight = selectOrZero(
            b, loc, inside, mul(b, loc, dy ? wy1 : wy0, dx ? wx1 : wx0));
        Value term = mul(b, loc, value, reshape(b, loc, weight, {n, 1, h * w}));
        sum = sum ? add(b, loc, sum, term) : term;
      }
    }
    return reshape(b, loc, sum, {n, c, h, w});
  }

  /// Whether 0 <= v <= size - 1.
  Value inBounds(Value v, int64_t size) {
    Type element = typeOf(v).getElementType();
    return AndOp::create(b, loc,
                         CompareOp::create(b, loc, ComparePredicate::ge, v,
                                           constant(element, 0)),
                         CompareOp::create(b, loc, ComparePredicate::le, v,
                                           constant(element, size - 1)));
  }
  /// v clamped to [0, size - 1].
  Value clampTo(Value v, int64_t size) {
    Type element = typeOf(v).getElementType();
    return MinOp::create(b, loc, MaxOp::create(b, loc, v, constant(element, 0)),
                         constant(element, size - 1));
  }

  FailureOr<Value> normalize(Value x, const Transform &t) {
    RankedTensorType type = typeOf(x);
    int64_t channels = type.getDimSize(1);
    auto perChannel = [&](ArrayRef<double> values) -> FailureOr<Value> {
      if (values.size() != 1 && static_cast<int64_t>(values.size()) != channels)
        return failure();
      auto constType =
          RankedTensorType::get({1, static_cast<int64_t>(values.size()), 1, 1},
                                type.getElementType());
      SmallVector<Attribute> attrs;
      for (double v : values)
        attrs.push_back(b.getFloatAttr(type.getElementType(), v));
      return Value(
          ConstantOp::create(b, loc, DenseElementsAttr::get(constType, attrs)));
    };
    FailureOr<Value> mean = perChannel(t.mean), std = perChannel(t.std);
    if (failed(mean) || failed(std))
      return emitError(loc)
             << "normalize has " << t.mean.size() << " means and "
             << t.std.size() << " standard deviations for " << channels
             << " channels (one, or one per channel)";
    return div(b, loc, sub(b, loc, x, *mean), *std);
  }

  OpBuilder &b;
  Location loc;
  Value seed;
  int64_t stream;
};

/// The function's load of the seed; declared, loaded at the entry and
/// advanced before the return (as the importer does for dropout) when the
/// function has none.
FailureOr<Value> stepSeed(ModuleOp module, func::FuncOp func) {
  GlobalLoadOp found;
  func.walk([&](GlobalLoadOp load) {
    if (load.getGlobal() == roles::kRngSeedGlobal)
      found = load;
  });
  // The importer loads it before the first dropout; the images are used
  // earlier.
  if (found) {
    found->moveBefore(&func.getBody().front().front());
    return found.getResult();
  }
  auto type =
      RankedTensorType::get({}, IntegerType::get(module.getContext(), 64));
  OpBuilder b(module.getContext());
  if (Operation *existing = module.lookupSymbol(roles::kRngSeedGlobal)) {
    auto global = dyn_cast<GlobalOp>(existing);
    if (!global || global.getType() != type)
      return existing->emitError()
             << "is not the tensor<i64> seed global augmentation draws from";
  } else {
    b.setInsertionPoint(func);
    GlobalOp::create(
        b, func.getLoc(), roles::kRngSeedGlobal, type,
        cast<ElementsAttr>(DenseElementsAttr::get(type, int64_t(0))));
  }
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  Value seed =
      GlobalLoadOp::create(b, func.getLoc(), type, roles::kRngSeedGlobal);
  b.setInsertionPoint(entry.getTerminator());
  Value next =
      add(b, func.getLoc(), seed,
          ConstantOp::create(b, func.getLoc(),
                             DenseElementsAttr::get(type, int64_t(1))));
  GlobalStoreOp::create(b, func.getLoc(), roles::kRngSeedGlobal, next);
  return seed;
}

struct AugmentPass : public impl::DLCAugmentBase<AugmentPass> {
  using DLCAugmentBase::DLCAugmentBase;

  void runOnOperation() override {
    if (transforms.empty())
      return;
    ModuleOp module = getOperation();
    auto func = module.lookupSymbol<func::FuncOp>(functionName);
    if (!func) {
      module.emitError() << "has no function @" << functionName
                         << " to augment the images of";
      return signalPassFailure();
    }
    FailureOr<SmallVector<Transform>> parsed =
        parseTransforms(transforms, func);
    if (failed(parsed))
      return signalPassFailure();
    SmallVector<BlockArgument> images;
    for (BlockArgument arg : func.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (type && type.getRank() == 4 && isa<FloatType>(type.getElementType()))
        images.push_back(arg);
    }
    if (images.empty()) {
      func.emitError() << "has no image argument [N, C, H, W] of floats to "
                          "augment";
      return signalPassFailure();
    }
    FailureOr<Value> seed = stepSeed(module, func);
    if (failed(seed))
      return signalPassFailure();
    OpBuilder b(func.getContext());
    b.setInsertionPointAfterValue(*seed);
    for (BlockArgument image : images) {
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : image.getUses())
        uses.push_back(&use);
      // The same streams for every image: a sample's images share draws.
      ImageAugmenter augmenter(b, image.getLoc(), *seed, kFirstStream);
      FailureOr<Value> x = augmenter.augment(image, *parsed);
      if (failed(x))
        return signalPassFailure();
      for (OpOperand *use : uses)
        use->set(*x);
    }
  }
};

} // namespace

} // namespace mlir::dlc
