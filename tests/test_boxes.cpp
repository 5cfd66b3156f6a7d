// placeholder: being written
#include "common.hpp"
