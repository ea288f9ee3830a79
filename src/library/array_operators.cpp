// Array's methods and operators that are numpy functions (declared in frontend/array.h, as
// MLX declares them beside its array): defined here so the frontend never includes the library.
#include "frontend/array.h"
#include "library/numpy.h"

namespace kiln {

Array Array::astype(DType dt) const { return numpy::asarray(*this, dt); }
Array Array::reshape(const Shape& s) const { return numpy::reshape(*this, s); }
Array Array::transpose() const { return numpy::transpose(*this); }
Array Array::operator[](const std::vector<Index>& index) const { return numpy::index(*this, index); }

Array operator+(const Array& a, const Array& b) { return numpy::add(a, b); }
Array operator-(const Array& a, const Array& b) { return numpy::subtract(a, b); }
Array operator*(const Array& a, const Array& b) { return numpy::multiply(a, b); }
Array operator/(const Array& a, const Array& b) { return numpy::divide(a, b); }
Array operator%(const Array& a, const Array& b) { return numpy::mod(a, b); }
Array operator-(const Array& a) { return numpy::negative(a); }
Array operator<(const Array& a, const Array& b) { return numpy::less(a, b); }
Array operator<=(const Array& a, const Array& b) { return numpy::less_equal(a, b); }
Array operator>(const Array& a, const Array& b) { return numpy::greater(a, b); }
Array operator>=(const Array& a, const Array& b) { return numpy::greater_equal(a, b); }
Array operator==(const Array& a, const Array& b) { return numpy::equal(a, b); }
Array operator!=(const Array& a, const Array& b) { return numpy::not_equal(a, b); }
Array operator&(const Array& a, const Array& b) { return numpy::bitwise_and(a, b); }
Array operator|(const Array& a, const Array& b) { return numpy::bitwise_or(a, b); }
Array operator^(const Array& a, const Array& b) { return numpy::bitwise_xor(a, b); }
Array operator~(const Array& a) { return numpy::bitwise_not(a); }
Array operator!(const Array& a) { return numpy::logical_not(a); }

}  // namespace kiln
