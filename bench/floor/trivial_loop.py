# The dispatch floor, measured outside our TypeScript worker: a trivial workflow whose every
# iteration runs two no-op activities (the shape of one agent iteration: two workflow tasks,
# two activity tasks), run (1) by Python's temporalio SDK worker and (2) by a bare loop of gRPC
# calls (poll, respond) with no SDK worker at all, a poll always waiting before a task exists.
# bench/dispatchFloor.ts drives it: one command per line on stdin ("sdk N" or "raw N"), one
# workflow id per line on stdout; it reads the histories itself.
import asyncio
import sys
import uuid
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.api.command.v1 import (
    Command,
    CompleteWorkflowExecutionCommandAttributes,
    ScheduleActivityTaskCommandAttributes,
)
from temporalio.api.common.v1 import ActivityType, WorkflowType
from temporalio.api.enums.v1 import CommandType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import (
    PollActivityTaskQueueRequest,
    PollWorkflowTaskQueueRequest,
    RespondActivityTaskCompletedRequest,
    RespondWorkflowTaskCompletedRequest,
    StartWorkflowExecutionRequest,
)
from temporalio.client import Client
from temporalio.worker import Worker
from google.protobuf.duration_pb2 import Duration


@activity.defn(name="noop")
async def noop() -> None:
    return None


@workflow.defn(name="trivialLoop", sandboxed=False)
class TrivialLoop:
    @workflow.run
    async def run(self, iterations: int) -> None:
        for _ in range(iterations):
            await workflow.execute_activity(noop, start_to_close_timeout=timedelta(seconds=30))
            await workflow.execute_activity(noop, start_to_close_timeout=timedelta(seconds=30))


async def raw_loop(client: Client, namespace: str, iterations: int) -> str:
    service = client.workflow_service
    queue = f"floor-raw-{uuid.uuid4()}"
    workflow_id = f"floor-raw-{uuid.uuid4()}"
    identity = "bench-raw-loop"
    task_queue = TaskQueue(name=queue)
    poll_workflow = lambda: asyncio.ensure_future(
        service.poll_workflow_task_queue(PollWorkflowTaskQueueRequest(namespace=namespace, task_queue=task_queue, identity=identity))
    )
    poll_activity = lambda: asyncio.ensure_future(
        service.poll_activity_task_queue(PollActivityTaskQueueRequest(namespace=namespace, task_queue=task_queue, identity=identity))
    )
    workflow_poll = poll_workflow()
    await service.start_workflow_execution(
        StartWorkflowExecutionRequest(
            namespace=namespace,
            workflow_id=workflow_id,
            workflow_type=WorkflowType(name="trivialLoop"),
            task_queue=task_queue,
            identity=identity,
            request_id=str(uuid.uuid4()),
        )
    )
    activities_left = iterations * 2
    while True:
        task = await workflow_poll
        if not task.task_token:  # an empty poll (timeout): poll again
            workflow_poll = poll_workflow()
            continue
        if activities_left == 0:
            command = Command(
                command_type=CommandType.COMMAND_TYPE_COMPLETE_WORKFLOW_EXECUTION,
                complete_workflow_execution_command_attributes=CompleteWorkflowExecutionCommandAttributes(),
            )
            await service.respond_workflow_task_completed(
                RespondWorkflowTaskCompletedRequest(namespace=namespace, task_token=task.task_token, commands=[command], identity=identity)
            )
            return workflow_id
        activities_left -= 1
        command = Command(
            command_type=CommandType.COMMAND_TYPE_SCHEDULE_ACTIVITY_TASK,
            schedule_activity_task_command_attributes=ScheduleActivityTaskCommandAttributes(
                activity_id=str(activities_left),
                activity_type=ActivityType(name="noop"),
                task_queue=task_queue,
                start_to_close_timeout=Duration(seconds=30),
            ),
        )
        activity_poll = poll_activity()
        await asyncio.sleep(0.001)  # the poll goes out before the task it waits for exists
        await service.respond_workflow_task_completed(
            RespondWorkflowTaskCompletedRequest(namespace=namespace, task_token=task.task_token, commands=[command], identity=identity)
        )
        activity_task = await activity_poll
        while not activity_task.task_token:
            activity_task = await poll_activity()
        workflow_poll = poll_workflow()
        await asyncio.sleep(0.001)  # the poll goes out before the task it waits for exists
        await service.respond_activity_task_completed(
            RespondActivityTaskCompletedRequest(namespace=namespace, task_token=activity_task.task_token, identity=identity)
        )


async def main() -> None:
    address, namespace = sys.argv[1], sys.argv[2]
    client = await Client.connect(address, namespace=namespace)
    sdk_queue = f"floor-python-{uuid.uuid4()}"
    # Eager activity execution off: every activity goes through the server's matching, as ours do.
    async with Worker(client, task_queue=sdk_queue, workflows=[TrivialLoop], activities=[noop], disable_eager_activity_execution=True):
        print("ready", flush=True)
        loop = asyncio.get_running_loop()
        while True:
            line = await loop.run_in_executor(None, sys.stdin.readline)
            if not line:
                return
            mode, iterations = line.split()
            if mode == "sdk":
                workflow_id = f"floor-python-{uuid.uuid4()}"
                await client.execute_workflow(TrivialLoop.run, int(iterations), id=workflow_id, task_queue=sdk_queue)
            else:
                workflow_id = await raw_loop(client, namespace, int(iterations))
            print(workflow_id, flush=True)


if __name__ == "__main__":
    asyncio.run(main())
