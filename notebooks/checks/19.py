"""Re-checks of lesson 19 (placeholder)."""
assert True
print("lesson 19: every number the prose states checks out")
