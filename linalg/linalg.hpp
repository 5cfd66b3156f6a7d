// ember::linalg: distributed dense linear algebra over dndarrays. Tall-skinny
// problems use communication-avoiding algorithms (TSQR and what builds on it);
// everything else goes to ScaLAPACK through the exchange engine (bridge.hpp).
#pragma once

#include "types.hpp"
#include "bridge.hpp"
#include "qr.hpp"
#include "svd.hpp"
#include "solvers.hpp"
#include "lu.hpp"
#include "least_squares.hpp"
#include "products.hpp"
#include "hsvd.hpp"
#include "rsvd.hpp"
