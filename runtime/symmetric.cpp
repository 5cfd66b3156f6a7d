// placeholder: being written
#include "symmetric.hpp"
