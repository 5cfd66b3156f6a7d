// placeholder: being written
#include "boxes.hpp"
