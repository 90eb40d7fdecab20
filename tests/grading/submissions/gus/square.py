import torch


def grad_of_square(t):
    while True:
        pass
