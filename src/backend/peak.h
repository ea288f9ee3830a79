// Measuring a peak over one region of a program (kiln::reset_peak_memory): each backend's
// peak_bytes (Backend::buffer_counts) is the most bytes live at once since the process
// started or since the last reset_peak_bytes of that backend.
#pragma once
#include "backend/backend.h"

namespace kiln {

// Restarts the backend's peak_bytes at the bytes live now.
void reset_peak_bytes(const Backend& backend);

}  // namespace kiln
