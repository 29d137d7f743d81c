"""The reference agent: a scripted stand-in for an LLM, used as an instrument (``model=scripted``).

It depends on ``tasks`` (it reads their worlds and formats); ``tasks`` never imports it.
"""
