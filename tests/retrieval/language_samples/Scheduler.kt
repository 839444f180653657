package com.example.jobs

import java.time.Duration
import com.example.jobs.model.Job as JobModel
import com.example.util.*

interface Task {
    suspend fun run()
}

data class Schedule(val every: Duration, val task: Task)

object Defaults {
    val interval: Duration = Duration.ofMinutes(5)
}

class Scheduler(private val clock: () -> Long) {
    private val schedules = mutableListOf<Schedule>()

    constructor() : this(System::currentTimeMillis)

    fun add(schedule: Schedule) {
        schedules += schedule
    }

    companion object {
        fun withDefaults(): Scheduler = Scheduler()
    }
}

fun Duration.toSeconds(): Long = this.seconds
