// Building Status values with printf-style messages (host only), shared by the launchers.
#pragma once

#include <cstdarg>
#include <cstdio>

#include "dash_attn/attention.h"

namespace dash {

inline Status make_status(StatusCode code, const char* fmt, ...) {
  Status s;
  s.code = code;
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(s.message, sizeof(s.message), fmt, ap);
  va_end(ap);
  return s;
}

}  // namespace dash
