// Runs the host tests (no GPU needed). ./host_tests [group...] runs only those groups.
#include <cstring>

#include "harness.h"

int main(int argc, char** argv) {
  int passed = 0, failed = 0;
  for (const auto& t : test_registry()) {
    bool selected = argc == 1;
    for (int i = 1; i < argc; ++i) selected = selected || std::strcmp(argv[i], t.group) == 0;
    if (!selected) continue;
    int before = test_failures();
    t.body();
    bool ok = test_failures() == before;
    std::printf("%s %s.%s\n", ok ? "ok  " : "FAIL", t.group, t.name);
    (ok ? passed : failed)++;
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  if (passed + failed == 0) {
    std::printf("no test matched\n");
    return 1;
  }
  return failed ? 1 : 0;
}
