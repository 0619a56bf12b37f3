#include "dash_attn/schedule.h"

#include <cstring>

namespace dash {

namespace {
constexpr const char* kScheduleNames[] = {"ascending", "spt",    "descending", "shift",
                                          "symmetric_shift", "atomic", "auto"};
}

const char* schedule_name(Schedule s) {
  const int i = static_cast<int>(s);
  return i >= 0 && i <= static_cast<int>(Schedule::kAuto) ? kScheduleNames[i] : "unknown";
}

bool parse_schedule(const char* name, Schedule* out) {
  if (name == nullptr) return false;
  for (int i = 0; i <= static_cast<int>(Schedule::kAuto); ++i) {
    if (std::strcmp(name, kScheduleNames[i]) == 0) {
      *out = static_cast<Schedule>(i);
      return true;
    }
  }
  return false;
}

const char* dispatch_name(Dispatch d) { return d == Dispatch::kStatic ? "static" : "dynamic"; }

bool parse_dispatch(const char* name, Dispatch* out) {
  if (name == nullptr) return false;
  if (std::strcmp(name, "static") == 0) { *out = Dispatch::kStatic; return true; }
  if (std::strcmp(name, "dynamic") == 0) { *out = Dispatch::kDynamic; return true; }
  return false;
}

}  // namespace dash
