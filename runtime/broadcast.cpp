// placeholder: being written
#include "broadcast.hpp"
