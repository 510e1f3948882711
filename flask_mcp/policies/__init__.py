"""What a registration decides about its calls: options, time limits, transactions,
permissions, rate limits, and who the caller is.
"""
