// placeholder: being written
#pragma once
#include "types.hpp"
