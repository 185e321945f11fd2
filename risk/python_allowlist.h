// python_allowlist — the data behind the python rules of the `auto` classifier (risk/risk.h,
// issue 22 part 1): which modules Python code may import and stay low, which names it may never
// touch, and which modules are named dangers. Reviewed in one file, risk/python_allowlist.cpp,
// each entry with the source of its safety (or of its danger).
//
// How the lists are used (risk/risk_python.cpp):
//   safe_modules     an `import` or `from … import` of any other module asks; an unknown module
//                    is "not known to be safe" (reason_kind::unknown), a known_unsafe_modules
//                    entry is a hazard.
//   denied_names     a name or attribute with this spelling (also with leading underscores:
//                    `_os`, `__os`) asks wherever it appears outside strings and comments, at any
//                    place of a dotted chain (`shutil.os.system`, `typing.sys.modules`), always a
//                    hazard. `bare` entries (eval, getattr, …) count only as a bare name, not
//                    as an attribute (`model.eval()` is someone's method); `attribute` entries
//                    (raw, detach) only after a '.'.
//   allowed_dunders  `__name__`-style names that may appear; every other dunder asks.
// tests/check_python_allowlist.py (the `python_allowlist` gate) imports every safe module in
// the build machine's Python, walks every attribute, class, instance and container reachable
// from them, and fails when a module outside the list (and outside its reviewed harmless set) or
// a dangerous built-in (eval, open, os.system, …) is reachable without passing a denied name or
// a dunder that is not allowed: the evidence that the attribute rule closes the module list.
// Thread-safety: immutable data.
#pragma once

#include <span>
#include <string_view>

namespace warden::risk::python_lists {

struct safe_module {
  std::string_view name;    ///< exact dotted module name ("collections.abc")
  std::string_view source;  ///< why it is safe: its documentation and what was checked
};

/// Where a denied name counts.
enum class place {
  anywhere,   ///< as a name and as an attribute (os, unlink, __globals__)
  bare,       ///< only as a bare name: a built-in (eval, getattr); `model.eval()` is a method
  attribute,  ///< only after a '.': `f.raw`, while a variable named raw is everyday
};

struct denied_name {
  std::string_view name;    ///< the identifier ("os", "eval", "__subclasses__")
  std::string_view what;    ///< the reason's phrase ("runs programs or reaches the system")
  place where = place::anywhere;
  std::string_view source;  ///< where the danger is documented
};

struct unsafe_module {
  std::string_view name;    ///< top-level module ("subprocess", "asyncio")
  std::string_view what;    ///< the reason's phrase ("runs programs")
  std::string_view source;
};

/// Modules whose import keeps code low.
std::span<const safe_module> safe_modules();
/// Names that make code ask wherever they appear.
std::span<const denied_name> denied_names();
/// Modules not on the safe list whose danger is known (a hazard rather than "not known").
std::span<const unsafe_module> known_unsafe_modules();
/// The dunder names (`__init__`, `__name__`, …) code may use; every other `__x__` asks.
std::span<const std::string_view> allowed_dunders();

}  // namespace warden::risk::python_lists
