#include <ember.hpp>
int main(int argc, char** argv) { ember::environment env(argc, argv); }
