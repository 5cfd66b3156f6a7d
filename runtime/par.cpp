// placeholder: being written
#include "par.hpp"
