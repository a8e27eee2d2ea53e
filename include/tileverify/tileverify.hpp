// tileverify/tileverify.hpp — everything public, in one include.
#pragma once

#include "tileverify/cuda.hpp"
#include "tileverify/decide.hpp"
#include "tileverify/differential.hpp"
#include "tileverify/domains.hpp"
#include "tileverify/equiv.hpp"
#include "tileverify/eval.hpp"
#include "tileverify/oracle.hpp"
#include "tileverify/ptx.hpp"
#include "tileverify/program.hpp"
#include "tileverify/expr.hpp"
#include "tileverify/rational.hpp"
#include "tileverify/testing.hpp"

namespace tileverify {
constexpr const char* version = "0.1.0";
}
