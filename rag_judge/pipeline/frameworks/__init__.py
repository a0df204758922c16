"""LangChain and LlamaIndex: their retrievers, chains and query engines as the RAG under test,
and our embedders as theirs. Each library is imported only when one of its objects is given
(or an adapter asked for), so rag_judge without the ``langchain``/``llamaindex`` extras never
loads them.
"""
