//===- Progress.cpp - Training progress on stderr -------------------------===//
#include "tools/runner/Progress.h"

#include <algorithm>
#include <cmath>

namespace dlc::runner {
namespace {

/// A live line is redrawn at most this often: faster is unreadable and
/// costs a write per step.
constexpr double kRedrawSeconds = 0.25;

double secondsBetween(Progress::Clock::time_point a,
                      Progress::Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

} // namespace

std::string withThousands(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return (value < 0 ? "-" : "") + out;
}

std::string formatDuration(double seconds) {
  int64_t total = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  int64_t h = total / 3600, m = total / 60 % 60, s = total % 60;
  char text[48];
  if (h)
    std::snprintf(text, sizeof(text), "%lld:%02lld:%02lld",
                  static_cast<long long>(h), static_cast<long long>(m),
                  static_cast<long long>(s));
  else
    std::snprintf(text, sizeof(text), "%lld:%02lld", static_cast<long long>(m),
                  static_cast<long long>(s));
  return text;
}

Progress::Progress(std::FILE *out, bool live, int64_t firstStep,
                   int64_t lastStep, int64_t itemsPerStep, std::string unit)
    : out_(out), live_(live), firstStep_(firstStep), lastStep_(lastStep),
      itemsPerStep_(itemsPerStep),
      every_(std::max<int64_t>(1, (lastStep - firstStep) / 20)),
      unit_(std::move(unit)),
      start_(Clock::now()), lastTime_(start_), doneStep_(firstStep),
      printedStep_(firstStep) {}

void Progress::update(int64_t stepsDone, double loss) {
  Clock::time_point now = Clock::now();
  doneStep_ = stepsDone;
  bool last = stepsDone == lastStep_;
  if (live_) {
    if (last || secondsBetween(lastTime_, now) >= kRedrawSeconds)
      print(stepsDone, loss, now);
    return;
  }
  // The first step too, so a log shows where the loss started.
  bool first = stepsDone == firstStep_ + 1;
  if (first || last || (stepsDone - firstStep_) % every_ == 0)
    print(stepsDone, loss, now);
}

void Progress::print(int64_t stepsDone, double loss, Clock::time_point now) {
  double seconds = secondsBetween(lastTime_, now);
  double rate =
      seconds > 0
          ? static_cast<double>((stepsDone - printedStep_) * itemsPerStep_) /
                seconds
          : 0.0;
  lastTime_ = now;
  printedStep_ = stepsDone;
  std::string elapsed = formatDuration(secondsBetween(start_, now));
  std::string eta =
      rate > 0 ? formatDuration(static_cast<double>((lastStep_ - stepsDone) *
                                                    itemsPerStep_) /
                                rate)
               : "-:--";
  if (!live_) {
    std::fprintf(out_, "step %lld/%lld loss %.4f %.1f %s/s elapsed %s ETA %s\n",
                 static_cast<long long>(stepsDone),
                 static_cast<long long>(lastStep_), loss, rate, unit_.c_str(),
                 elapsed.c_str(), eta.c_str());
    std::fflush(out_);
    return;
  }
  // "\x1b[K" clears what a longer previous line left.
  std::fprintf(out_,
               "\rstep %lld/%lld  loss %.4f  %s %s/s  elapsed %s  ETA %s\x1b[K",
               static_cast<long long>(stepsDone),
               static_cast<long long>(lastStep_), loss,
               withThousands(std::llround(rate)).c_str(), unit_.c_str(),
               elapsed.c_str(), eta.c_str());
  std::fflush(out_);
  lineOpen_ = true;
}

void Progress::interrupt() {
  if (!lineOpen_)
    return;
  std::fputc('\n', out_);
  std::fflush(out_);
  lineOpen_ = false;
}

void Progress::finish() {
  interrupt();
  double seconds = secondsBetween(start_, Clock::now());
  int64_t steps = doneStep_ - firstStep_;
  double rate = seconds > 0
                    ? static_cast<double>(steps * itemsPerStep_) / seconds
                    : 0.0;
  std::fprintf(out_, "trained %lld steps in %.2f s, %.1f %s/s\n",
               static_cast<long long>(steps), seconds, rate, unit_.c_str());
  std::fflush(out_);
}

} // namespace dlc::runner
