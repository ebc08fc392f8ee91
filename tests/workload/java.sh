# Java: compile and run a class, and run a source file directly (Debian's JDK reads its
# security settings through a link into /etc/java-*).
mkdir -p w/java && cd w/java || exit 1
printf 'class H { public static void main(String[] a) { System.out.println("hello-java"); } }\n' > H.java
javac H.java && java -cp . H | grep -qx hello-java && echo "OK java-compile"
printf 'class J { public static void main(String[] a) { System.out.println("hello-source"); } }\n' > J.java
java J.java | grep -qx hello-source && echo "OK java-source"
