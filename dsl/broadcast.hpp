// placeholder: being written
#pragma once
#include "dndarray.hpp"
