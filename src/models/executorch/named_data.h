// kiln::executorch named data: the external constants of a program exported with
// ExecuTorch's `external_constants`, read from the `.ptd` file the exporter writes beside it.
#pragma once
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "formats/pte.h"
#include "frontend/array.h"

namespace kiln::executorch {

// Every tensor of a `.ptd` file (formats::parse_ptd) as an Array under its key, the fully
// qualified name the program's external tensors use; pass the map to Program::load:
//   auto program = executorch::Program::load(pte_bytes, executorch::read_ptd(ptd_bytes));
// Entries without a tensor layout (raw blobs) are skipped, a non-contiguous one is an error;
// dtypes map as the program's constants do (Long narrows to int32, an error if a value does
// not fit). The Arrays copy their bytes, so `ptd` need not outlive the call.
std::map<std::string, Array> read_ptd(std::span<const uint8_t> ptd);

// `data` (prod(shape) items of `type`) as an Array of kiln's dtype for `type`; integers
// widen or narrow to int32, and a value past int32 is an error naming `where`, not a wrap.
Array tensor_array(std::span<const uint8_t> data, formats::PteScalarType type, const Shape& shape,
                   const std::string& where);

}  // namespace kiln::executorch
