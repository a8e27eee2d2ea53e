// Links against tileverify and decides one identity: exits 0 iff it is proved.
#include <tileverify/tileverify.hpp>

#include <cstdio>

int main() {
  tileverify::ExprContext c;
  auto x = c.symbol("x", 0), y = c.symbol("y", 0);
  auto d = tileverify::decide_equal(c, c.mul(c.exp(x), c.exp(y)), c.exp(c.add(x, y)));
  std::printf("%s\n", tileverify::verdict_name(d.verdict));
  return d.proved() ? 0 : 1;
}
