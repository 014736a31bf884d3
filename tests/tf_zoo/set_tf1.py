def cases():
    return []
