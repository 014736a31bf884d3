// Special functions of the reference kernels, computed in double: the
// digamma function (the logarithmic derivative of gamma). The algorithm is
// the usual one (Cephes's psi, also Eigen's and so TensorFlow's): reflection
// for x <= 0, the recurrence psi(x + 1) = psi(x) + 1 / x up to x >= 10, then
// the asymptotic series.
#ifndef PLEXUS_SDK_REFERENCE_SPECIAL_FUNCTIONS_H_
#define PLEXUS_SDK_REFERENCE_SPECIAL_FUNCTIONS_H_

#include <cmath>
#include <limits>

namespace plexus::reference {

// psi(x): NaN at 0, at the negative integers and at -inf; +inf at +inf.
inline double Digamma(double x) {
  constexpr double kPi = 3.14159265358979323846;
  bool negative = false;
  double reflection = 0;
  if (x <= 0) {
    const double p = std::floor(x);
    if (p == x) return std::numeric_limits<double>::quiet_NaN();
    // pi / tan(pi x), with x moved by the nearest integer (tan's period) so
    // that the argument stays small.
    double r = x - p;
    if (r != 0.5) {
      if (r > 0.5) r = x - (p + 1);
      reflection = kPi / std::tan(kPi * r);
    }
    negative = true;
    x = 1 - x;
  }
  double w = 0;
  while (x < 10) {
    w += 1 / x;
    x += 1;
  }
  double series = 0;
  if (x < 1e17) {
    // Bernoulli terms B_2k / (2k x^2k), k = 1..7, in z = 1 / x^2.
    static const double kA[] = {8.33333333333333333333E-2,  -2.10927960927960927961E-2,
                                7.57575757575757575758E-3,  -4.16666666666666666667E-3,
                                3.96825396825396825397E-3,  -8.33333333333333333333E-3,
                                8.33333333333333333333E-2};
    const double z = 1 / (x * x);
    double poly = 0;
    for (double a : kA) poly = poly * z + a;
    series = z * poly;
  }
  const double y = std::log(x) - 0.5 / x - series - w;
  return negative ? y - reflection : y;
}

}  // namespace plexus::reference

#endif  // PLEXUS_SDK_REFERENCE_SPECIAL_FUNCTIONS_H_
