// warden::result<T> — the value-or-error type for expected failures (DESIGN.md §7).
//
// C++20 has no std::expected, so this is a small variant wrapper with the same spirit:
//   result<int> r = 3;            r.ok(), *r, r.value()
//   result<int> e = error{...};   !e.ok(), e.error()
// Accessing the wrong alternative is a bug and throws std::bad_variant_access.
// Thread-safety: a value type; no shared state.
#pragma once

#include <utility>
#include <variant>

#include "common/error.h"

namespace warden {

template <class T>
class [[nodiscard]] result {
 public:
  result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  result(warden::error err) : v_(std::in_place_index<1>, std::move(err)) {}  // NOLINT: implicit by design

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const warden::error& error() const& { return std::get<1>(v_); }
  warden::error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, warden::error> v_;
};

/// result<void>: success carries nothing.
template <>
class [[nodiscard]] result<void> {
 public:
  result() = default;
  result(warden::error err) : err_(std::move(err)), ok_(false) {}  // NOLINT: implicit by design

  bool ok() const noexcept { return ok_; }
  explicit operator bool() const noexcept { return ok_; }
  const warden::error& error() const& { return err_; }

 private:
  warden::error err_{};
  bool ok_ = true;
};

}  // namespace warden
