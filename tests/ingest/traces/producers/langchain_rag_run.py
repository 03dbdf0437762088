"""Runs a small retrieval agent made of langchain-core parts, traced by LangChain's LangSmith tracer to the scripted
model server's stand-in of LangSmith's ingest API (`/runs/batch`). A chat model scripted in this process plans
search queries with `with_structured_output`, a retriever (a `BaseRetriever` over four notes: those that share a word
with the query, best first) runs each query, the model calls a retriever tool (`create_retriever_tool`, whose tool run holds a retriever run),
then answers. Prints what it fixed and what came back (the oracle) as JSON.

Run with a langchain-core venv's Python: `langchain_rag_run.py LANGSMITH_ENDPOINT`.
"""

import json
import os
import sys

QUESTION = "When is the next spring tide in Oslo?"
QUERIES = ["Oslo high water", "full moon March"]
TOOL_QUERY = "spring tide date"
ANSWER = "The next spring tide in Oslo is on 14 March, at the full moon."
NOTES = [("https://tides.example/oslo", "Oslo tide table", "High water in Oslo: 06:10 and 18:32."),
         ("https://tides.example/spring", "Spring tides", "Spring tides follow the new and the full moon."),
         ("https://tides.example/moon", "Moon phases 2025", "Full moon: 14 March. New moon: 29 March."),
         ("https://tides.example/neap", "Neap tides", "Neap tides come at the quarter moons.")]


def main(endpoint: str) -> None:
    os.environ.update({"LANGSMITH_TRACING": "true", "LANGSMITH_ENDPOINT": endpoint, "LANGSMITH_API_KEY": "x",
                       "LANGSMITH_PROJECT": "tides"})
    from langchain_core.documents import Document
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, HumanMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.runnables import RunnableLambda
    from langchain_core.tools import create_retriever_tool
    from langchain_core.tracers.langchain import wait_for_all_tracers
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langchain_core.retrievers import BaseRetriever
    from pydantic import BaseModel

    class Queries(BaseModel):
        """Search queries that answer the question."""
        queries: list[str]

    class ScriptedChat(BaseChatModel):
        replies: list
        model_name: str = "scripted-model-1"

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            return ChatResult(generations=[ChatGeneration(message=self.replies.pop(0))])

        def bind_tools(self, tools, *, tool_choice=None, **kwargs):
            return self.bind(tools=[convert_to_openai_tool(t) for t in tools], tool_choice=tool_choice, **kwargs)

    class NotesRetriever(BaseRetriever):
        k: int = 2

        def _get_relevant_documents(self, query, *, run_manager):
            words = set(query.lower().split())
            ranked = sorted(NOTES, key=lambda n: -len(words & set(f"{n[1]} {n[2]}".lower().split())))
            return [Document(page_content=text, metadata={"source": url, "title": title})
                    for url, title, text in ranked[:self.k]]

    retriever = NotesRetriever()
    search_docs = create_retriever_tool(retriever, "search_docs", "Searches the tide notes.")
    model = ScriptedChat(replies=[
        AIMessage(content="", tool_calls=[{"name": "Queries", "args": {"queries": QUERIES}, "id": "call_1"}]),
        AIMessage(content="", tool_calls=[{"name": "search_docs", "args": {"query": TOOL_QUERY}, "id": "call_2"}]),
        AIMessage(content=ANSWER)])

    def agent(question: str) -> dict:
        planned = model.with_structured_output(Queries).invoke(question)
        found = [retriever.invoke(q) for q in planned.queries]
        messages = [HumanMessage(question)]
        reply = model.bind_tools([search_docs]).invoke(messages)
        messages.append(reply)
        results = [search_docs.invoke(call) for call in reply.tool_calls]
        final = model.bind_tools([search_docs]).invoke(messages + results)
        return {"queries": planned.queries,
                "found": [[d.metadata["source"] for d in docs] for docs in found],
                "tool_calls": [[c["name"], c["args"]] for c in reply.tool_calls],
                "tool_results": [r.content for r in results], "answer": final.content}

    oracle = RunnableLambda(agent, name="tide agent").invoke(QUESTION)
    wait_for_all_tracers()
    print(json.dumps(oracle))


if __name__ == "__main__":
    main(sys.argv[1])
