"""action"""
