package quickstart

// passes is how many times Sum reads its input: the quick start's slowdown
// sets it to 3.
const passes = 1
