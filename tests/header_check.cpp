// Compiles every public header as strict C++17 (-Wpedantic -Werror).
#include "tileverify/decide.hpp"
#include "tileverify/domains.hpp"
#include "tileverify/eval.hpp"
#include "tileverify/program.hpp"
#include "tileverify/ptx.hpp"
#include "tileverify/expr.hpp"
#include "tileverify/rational.hpp"
#include "tileverify/tileverify.hpp"
