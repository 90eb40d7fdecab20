def grad_of_square(t):
    return 2 * t
