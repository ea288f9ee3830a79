// Public header: kiln::io, file readers (IDX for MNIST and Fashion-MNIST).
#pragma once
#include "library/gzip.h"
#include "library/idx.h"
