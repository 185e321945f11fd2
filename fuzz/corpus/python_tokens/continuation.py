x = (1 +
     2) \
  + 3
class A:
    def f(self): return getattr(self, "y")
