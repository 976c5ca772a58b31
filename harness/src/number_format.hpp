#pragma once
// Numbers as the reports print them: printf-style, and with an SI prefix.
#include <cmath>
#include <cstdio>
#include <string>

namespace sp {

inline std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// 3 significant digits and a prefix up to P: si(2.5e9, "B/s") = "2.5 GB/s".
inline std::string si(double v, const char* unit) {
  const char* pre[] = {"", "K", "M", "G", "T", "P"};
  int i = 0;
  while (std::fabs(v) >= 1000 && i < 5) v /= 1000, ++i;
  return fmt("%.3g", v) + " " + pre[i] + unit;
}

}  // namespace sp
