# Each slow test's cost in seconds (its time in a full `ctest -j2` run on the 2-core machine
# type), so that a fresh build's ctest, which has no Testing/Temporary/CTestCostData.txt yet,
# starts the long tests first instead of finishing on one: tests run in descending COST. Once a
# run has recorded costs, ctest uses its own figures. A name that no longer exists is ignored.
# Included by ctest after the discovered tests (tests/CMakeLists.txt, TEST_INCLUDE_FILES).
set_tests_properties(LaunchLocal.SigintReachesEveryRankOnceAndTheLaunchExits130
                     PROPERTIES COST 20)
set_tests_properties(CliNproc.AStoppedRankEndsTheRunAndNothingIsLeftRunning
                     PROPERTIES COST 8)
set_tests_properties(Session.GpuTraceFollowsTheKinetoContractThatHtaReads
                     PROPERTIES COST 0.2)
set_tests_properties(DeepProfileEval.AnEvalPassInsideTheWindowGetsRowsOfItsOwn
                     PROPERTIES COST 0.3)
set_tests_properties(SweepResume.MeasuresTheMfuPeakOnceAndReusesItOnResume
                     PROPERTIES COST 5)
set_tests_properties(CliPeak.PrintsAPeakAndRejectsBadArguments
                     PROPERTIES COST 14)
set_tests_properties(SweepThreads.SetThreadsIsWhatTheSweepLogsRecordsAndMeasuresThePeakWith
                     PROPERTIES COST 3)
set_tests_properties(LlamaTrain.OpsLevelAttributesScopesAndCountsMatmulFlopsLikeTheAnalyticModel
                     PROPERTIES COST 0.3)
set_tests_properties(DeepProfile.RepeatedWindowsAddUpAndTheTraceHoldsTheFirst
                     PROPERTIES COST 0.3)
set_tests_properties(SweepResume.SigtermStopsLikeSigintAndTheSameCommandRunsOnlyWhatIsLeft
                     PROPERTIES COST 9)
set_tests_properties(SweepResume.SigintStopsAndTheSameCommandRunsOnlyWhatIsLeft
                     PROPERTIES COST 9)
set_tests_properties(Session.GpuActivityIsAttributedToOpsModulesAndKernels
                     PROPERTIES COST 0.1)
set_tests_properties(SweepResume.SigkillAndTheSameCommandRunsOnlyWhatIsLeft
                     PROPERTIES COST 8)
set_tests_properties(EncoderTraining.ModulesLevelTimesTheSameScopesAsTheDecoderAndReconcilesFlops
                     PROPERTIES COST 0.3)
set_tests_properties(DeepProfile.ModulesAndOpsLevelsDoNotChangeTheLossTrajectory
                     PROPERTIES COST 0.4)
set_tests_properties(DeepProfile.FullBufferWarnsAndTheRunCompletes
                     PROPERTIES COST 0.1)
set_tests_properties(DeepProfile.TraceIsValidChromeJsonWithMonotonicTimestamps
                     PROPERTIES COST 0.2)
set_tests_properties(RunTraining.TinyShakespeareValLossFallsWellBelowLnVocab
                     PROPERTIES COST 7)
set_tests_properties(Session.CustomLoopWritesTheRunDirectoryWithItsOwnScopesForwardAndBackward
                     PROPERTIES COST 0.1)
set_tests_properties(DeepProfile.OpsLevelCountsMatmulFlopsLikeTheAnalyticModel
                     PROPERTIES COST 7)
set_tests_properties(SweepRunPoint.APointClaimedByAnotherTaskIsNotRunTwice
                     PROPERTIES COST 7)
set_tests_properties(SweepJobs.TwoJobsSplitTheCoresAndComplete
                     PROPERTIES COST 6)
set_tests_properties(CliNproc.AKilledRankEndsTheRunWithinTheTimeoutNamingIt
                     PROPERTIES COST 6)
set_tests_properties(CliConfigErrors.EachClassExitsTwoNamingTheProblem
                     PROPERTIES COST 6)
set_tests_properties(SweepResume.RerunsFailedPointsAndKeepsDivergedOnes
                     PROPERTIES COST 5)
set_tests_properties(SweepCommand.TwoByTwoWritesFourCompletedRowsAndSweepJson
                     PROPERTIES COST 5)
set_tests_properties(CliReport.ReadsARunThatIsStillWriting
                     PROPERTIES COST 5)
set_tests_properties(DistFaults.StoppedStoreHostIsNamedWithinTheTimeout
                     PROPERTIES COST 4)
set_tests_properties(SweepStatus.ShowsRunningPointsByTheirLockAndDeadOnesAsInterrupted
                     PROPERTIES COST 4)
set_tests_properties(DistFaults.StoppedPeerIsNamedWithinTheTimeout
                     PROPERTIES COST 4)
set_tests_properties(EncoderTraining.SentimentClassificationBeatsChanceInAShortRun
                     PROPERTIES COST 4)
set_tests_properties(DdpTrain.OverlapOnAndOffGiveTheSameLosses
                     PROPERTIES COST 4)
set_tests_properties(CliNproc.SigintStopsEveryRankAndExits130
                     PROPERTIES COST 4)
set_tests_properties(ReportTry.MeasuresEachSuggestedSetAndKeepsTheVerdicts
                     PROPERTIES COST 4)
set_tests_properties(SweepRunPoint.SkipsAFinishedPointAndRejectsABadIndexOrDirectory
                     PROPERTIES COST 3)
set_tests_properties(CheckCli.AbOfIdenticalCommandsNeverFails
                     PROPERTIES COST 3)
set_tests_properties(CheckpointTokenizer.FineTuningFromARunTokenizesWithTheRunsVocabulary
                     PROPERTIES COST 0.1)
set_tests_properties(SweepResume.ChangedSetRunsPointsAgainWithoutOverwriting
                     PROPERTIES COST 3)
set_tests_properties(SweepThreads.SweptThreadsAreNotOneFigureInSweepJson
                     PROPERTIES COST 3)
set_tests_properties(ExportCommand.AFailedExportLeavesNothingAndNeverTouchesAnExistingOut
                     PROPERTIES COST 0.8)
set_tests_properties(SweepSlurm.MissingSbatchAndBadLauncherKeysAreClearErrors
                     PROPERTIES COST 3)
set_tests_properties(SweepCommand.BadKeyOrValueExitsTwoBeforeAnythingRuns
                     PROPERTIES COST 3)
set_tests_properties(DistFaults.KilledStoreHostIsNamed
                     PROPERTIES COST 3)
set_tests_properties(CliConfigErrors.EmptyOrCommentsOnlyConfigIsRefusedByEveryCommand
                     PROPERTIES COST 3)
set_tests_properties(ExportCommand.SigintDuringTheWriteLeavesNothingBehind
                     PROPERTIES COST 3)
set_tests_properties(DistFaults.KilledPeerIsNamed
                     PROPERTIES COST 3)
set_tests_properties(LlamaTrain.TinyConfigLossFalls
                     PROPERTIES COST 1.3)
set_tests_properties(SweepCommand.FailingPointIsRecordedAndTheSweepGoesOn
                     PROPERTIES COST 3)
set_tests_properties(CliNproc.TwoRanksWriteOneRunWithADirectoryPerRank
                     PROPERTIES COST 2)
set_tests_properties(SweepPlan.PointPredictedNotToFitIsSkippedWithTheReasonAndTheOthersRun
                     PROPERTIES COST 2)
set_tests_properties(DistFaults.PeerKilledBeforeBackwardFailsTheGradientAllReduce
                     PROPERTIES COST 2)
set_tests_properties(DistGroup.BroadcastMakesEveryRankHoldRankZerosParameters
                     PROPERTIES COST 2)
set_tests_properties(DdpTrain.AKilledRankEndsTheOtherWithinTheTimeoutNamingIt
                     PROPERTIES COST 2)
set_tests_properties(RunTokenizer.EvalAndExportOfARunNeedNeitherTheFolderNorAConfigNamingTheTokenizer
                     PROPERTIES COST 0.4)
set_tests_properties(CheckCli.BadInputExitsTwoNamingIt
                     PROPERTIES COST 2)
set_tests_properties(ReportTry.BadArgumentsExitTwoNamingTheFlag
                     PROPERTIES COST 2)

# Timing assertions run alone. The injected straggler's lag is checked within 10% of a 100 ms
# delay, and the injected clock skew within 50 us; with another test beside them on 2 cores the
# ranks' sleeps and launches overshoot by 10-16% (a CI run: 110 ms; 5 CPU hogs: 119-128 ms;
# alone: 103 ms), which is the host, not the analysis. Each takes 2-3 s.
set_tests_properties(CommAnalysis.NamesADelayedRankAndItsForwardAsTheStraggler
                     CommAnalysis.RecoversAnInjectedClockSkewWithin50Us PROPERTIES RUN_SERIAL ON)
