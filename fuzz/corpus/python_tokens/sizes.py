b = bytearray(7*2**30)
s = 'x' * 10**10
for i in range(10**12):
    pass
