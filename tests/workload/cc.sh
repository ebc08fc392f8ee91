# C and C++ builds with gcc, g++ and make.
mkdir -p w/cc && cd w/cc || exit 1
printf '#include <stdio.h>\nint main(void){puts("hello-c");return 0;}\n' > hello.c
gcc -O1 -o hello-c hello.c && ./hello-c | grep -qx hello-c && echo "OK gcc"
printf '#include <iostream>\n#include <vector>\nint main(){std::vector<int> v{1,2,3};std::cout<<"hello-cxx "<<v.size()<<"\\n";}\n' > hello.cpp
g++ -O1 -o hello-cxx hello.cpp && ./hello-cxx | grep -qx 'hello-cxx 3' && echo "OK g++"
printf 'int add(int a,int b){return a+b;}\n' > add.c
printf '#include <stdio.h>\nint add(int,int);\nint main(void){printf("sum %%d\\n",add(2,3));return 0;}\n' > main.c
printf 'prog: main.o add.o\n\t$(CC) -o $@ main.o add.o\n%%.o: %%.c\n\t$(CC) -c -o $@ $<\ncheck: prog\n\t./prog | grep -qx "sum 5"\n' > Makefile
make -s -j2 check && test -f main.o && echo "OK make"
