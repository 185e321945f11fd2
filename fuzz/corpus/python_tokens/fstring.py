name = "x"
print(f"{name!r:>{10}} {__import__('os').getcwd()}", rb'\x00', t"{a}")
# comment with os.system
