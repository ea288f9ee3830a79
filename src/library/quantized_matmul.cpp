// lax::quantized_matmul (quantized_matmul.h): binds the routine primitive.
#include "library/quantized_matmul.h"

#include "frontend/primitive.h"
#include "frontend/routine.h"

namespace kiln::lax {

Array quantized_matmul(const Array& x, const Array& codes, const Array& d, const Array& mins, QuantLayout layout,
                       int64_t rows) {
  frontend::Params p;
  p.quant = layout;
  p.rows = rows;
  return frontend::bind(frontend::Prim::QuantizedMatmul, {x, codes, d, mins}, p);
}

Array dequantize_packed(const Array& codes, const Array& d, const Array& mins, QuantLayout layout, int64_t rows,
                        int64_t k) {
  return frontend::dequantize_packed(codes, d, mins, layout, rows, k);
}

}  // namespace kiln::lax
