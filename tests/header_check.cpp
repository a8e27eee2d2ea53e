// Compiles every public header as strict C++17 (-Wpedantic -Werror).
#include "tileverify/decide.hpp"
#include "tileverify/expr.hpp"
#include "tileverify/rational.hpp"
#include "tileverify/tileverify.hpp"
