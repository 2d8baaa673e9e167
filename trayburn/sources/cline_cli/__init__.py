"""The Cline CLI's sessions as a source: its folders (`layout`), its JSON (`parse`), the Source (`source`).
Never speaks SQL.
"""
