# -*- coding: utf-7 -*-
+AGkAbQBwAG8AcgB0- os
